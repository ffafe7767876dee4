# A draft request runs as its core.Job and can be cancelled (annotation/drafting.py).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0012_hypo3d_paper_drafting_prompts'),
        ('core', '0006_job_cancelled'),
    ]

    operations = [
        migrations.AddField(
            model_name='draftrequest',
            name='job',
            field=models.ForeignKey(blank=True, help_text='Its progress record (core/jobs.py).', null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='core.job'),
        ),
        migrations.AlterField(
            model_name='draftrequest',
            name='status',
            field=models.CharField(choices=[('queued', 'Queued'), ('done', 'Done'), ('failed', 'Failed'), ('cancelled', 'Cancelled')], default='queued', max_length=20),
        ),
    ]
