# The history triggers' functions read the actor once per statement, from the statement's tail
# (core/sql.py): matching the whole text once per row made bulk inserts quadratic in their size.

from django.db import migrations

from core import sql


def redefine_functions(apps, schema_editor):
    for statement in sql.status_functions(schema_editor.connection.vendor):
        schema_editor.execute(statement, None)


class Migration(migrations.Migration):

    dependencies = [
        ('core', '0004_job_updated_at'),
    ]

    operations = [
        migrations.RunPython(redefine_functions, migrations.RunPython.noop),
    ]
