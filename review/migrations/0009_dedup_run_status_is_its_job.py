"""The second step (after 0008_dedup_run_jobs, in its own transaction: PostgreSQL alters no table whose rows
that transaction changed): the columns the job now holds go."""

from django.db import migrations, models
import django.db.models.deletion

from core.history import UntrackStatusHistory


class Migration(migrations.Migration):

    dependencies = [
        ('review', '0008_dedup_run_jobs'),
    ]

    operations = [
        UntrackStatusHistory('deduprun'),
        migrations.RemoveField(model_name='deduprun', name='status'),
        migrations.RemoveField(model_name='deduprun', name='error'),
        migrations.RemoveField(model_name='deduprun', name='finished_at'),
        migrations.AlterField(
            model_name='deduprun',
            name='job',
            field=models.ForeignKey(blank=True, help_text="The search as a job: its status, progress and report (core/jobs.py); made with the run (its key names the run's id).", null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='core.job'),
        ),
    ]
