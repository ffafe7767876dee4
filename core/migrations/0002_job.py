# Jobs: one record for every long-running task (core/jobs.py).

import core.status
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('core', '0001_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='Job',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(help_text='What the job does, e.g. release_export, dedup, stage.', max_length=40)),
                ('key', models.CharField(help_text='What makes two requests the same job: asking again returns this one.', max_length=200, unique=True)),
                ('subject', models.CharField(blank=True, help_text='What it works on, for people.', max_length=200)),
                ('status', models.CharField(choices=[('queued', 'Queued'), ('running', 'Running'), ('done', 'Done'), ('failed', 'Failed')], default='queued', max_length=10)),
                ('done', models.PositiveIntegerField(default=0)),
                ('total', models.PositiveIntegerField(blank=True, help_text='Empty while unknown.', null=True)),
                ('message', models.CharField(blank=True, help_text='The current step, or why it failed.', max_length=500)),
                ('report', models.JSONField(blank=True, default=dict, help_text='What it kept and dropped, and why.')),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('started_at', models.DateTimeField(blank=True, null=True)),
                ('finished_at', models.DateTimeField(blank=True, null=True)),
                ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'indexes': [models.Index(fields=['kind', '-created_at'], name='job_kind_recent')],
            },
            bases=(core.status.StatusTransitions, models.Model),
        ),
    ]
