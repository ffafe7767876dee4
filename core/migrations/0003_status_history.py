# Status history: one append-only table written by triggers on every stateful model's table
# (core/history.py); this one tracks jobs, each app's own migration tracks its models.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from core.history import TrackStatusHistory


class Migration(migrations.Migration):

    dependencies = [
        ('core', '0002_job'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='StatusChange',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('model', models.CharField(help_text="The model's label, e.g. 'annotation.assignment'.", max_length=100)),
                ('row_id', models.BigIntegerField()),
                ('from_status', models.CharField(blank=True, help_text='Empty on creation.', max_length=40, null=True)),
                ('to_status', models.CharField(max_length=40)),
                ('at', models.DateTimeField()),
                ('actor', models.ForeignKey(blank=True, db_constraint=False, help_text='The signed-in user whose request made the change; empty for background work (tasks, the reaper, commands).', null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['id'],
                'indexes': [models.Index(fields=['model', 'row_id', 'id'], name='status_history_of_row')],
            },
        ),
        TrackStatusHistory('job'),
    ]
