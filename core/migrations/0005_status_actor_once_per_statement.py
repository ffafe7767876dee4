# The history triggers' functions read the actor once per statement, from the statement's tail
# (core/reads.py): matching the whole text once per row made bulk inserts quadratic in their size.

from django.db import migrations

from core import reads


def redefine_functions(apps, schema_editor):
    for sql in reads.status_functions(schema_editor.connection.vendor):
        schema_editor.execute(sql, None)


class Migration(migrations.Migration):

    dependencies = [
        ('core', '0004_job_updated_at'),
    ]

    operations = [
        migrations.RunPython(redefine_functions, migrations.RunPython.noop),
    ]
