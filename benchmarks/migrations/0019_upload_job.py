# A large upload is checked as a core.Job, which it links (benchmarks/uploads.py).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('benchmarks', '0018_release_job'),
        ('core', '0006_job_cancelled'),
    ]

    operations = [
        migrations.AddField(
            model_name='upload',
            name='job',
            field=models.ForeignKey(blank=True, help_text='The check of a large upload, as its job; empty when it was checked at once.', null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='core.job'),
        ),
    ]
