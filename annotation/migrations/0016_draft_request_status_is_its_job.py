"""The second step (after 0015_draft_request_jobs, in its own transaction: PostgreSQL alters no table whose rows
that transaction changed): the columns the job now holds go."""

from django.db import migrations, models
import django.db.models.deletion


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0015_draft_request_jobs'),
    ]

    operations = [
        migrations.RemoveField(model_name='draftrequest', name='status'),
        migrations.RemoveField(model_name='draftrequest', name='error'),
        migrations.AlterField(
            model_name='draftrequest',
            name='job',
            field=models.ForeignKey(blank=True, help_text="Its status, message and report (core/jobs.py); made with the request (its key names the request's id).", null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='core.job'),
        ),
    ]
