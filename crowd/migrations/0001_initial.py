"""The crowd's tables move here from annotation as they are (names kept by db_table): state only.
Their content types follow, so admin permissions granted on them still hold."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

MOVED = ["crowdworker", "blockedworker", "webhookevent"]


def content_types_to(app_label, other):
    def move(apps, schema_editor):
        ContentType = apps.get_model("contenttypes", "ContentType")
        ContentType.objects.filter(app_label=other, model__in=MOVED).update(app_label=app_label)
    return move


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("contenttypes", "0002_remove_content_type_name"),
        ("annotation", "0008_blocklist_scope"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[
                migrations.CreateModel(
                    name='BlockedWorker',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('platform', models.CharField(choices=[('prolific', 'Prolific'), ('generic', 'Generic (worker_id)')], max_length=20)),
                        ('worker_id', models.CharField(max_length=100)),
                        ('scope', models.CharField(blank=True, default='', help_text='Empty: blocked everywhere. Else where: "campaign:<id>" or "study:<id>".', max_length=100)),
                        ('reason', models.TextField(blank=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                    ],
                    options={
                        'db_table': 'annotation_blockedworker',
                        'constraints': [models.UniqueConstraint(fields=('platform', 'worker_id', 'scope'), name='block_once_per_scope')],
                    },
                ),
                migrations.CreateModel(
                    name='WebhookEvent',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('platform', models.CharField(choices=[('prolific', 'Prolific'), ('generic', 'Generic (worker_id)')], max_length=20)),
                        ('event_id', models.CharField(max_length=200)),
                        ('payload', models.JSONField()),
                        ('received_at', models.DateTimeField(auto_now_add=True)),
                    ],
                    options={
                        'db_table': 'annotation_webhookevent',
                        'constraints': [models.UniqueConstraint(fields=('platform', 'event_id'), name='webhook_event_once')],
                    },
                ),
                migrations.CreateModel(
                    name='CrowdWorker',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('platform', models.CharField(choices=[('prolific', 'Prolific'), ('generic', 'Generic (worker_id)')], max_length=20)),
                        ('worker_id', models.CharField(help_text="PROLIFIC_PID or the platform's worker id.", max_length=100)),
                        ('study_id', models.CharField(blank=True, help_text='STUDY_ID on Prolific.', max_length=100)),
                        ('session_id', models.CharField(blank=True, help_text="The platform session this account is bound to (Prolific SESSION_ID, else the assignment id): a link with the worker id and another session signs nobody in. Clear it to let the worker's next link bind a new one.", max_length=100)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('user', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='crowd_worker', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'annotation_crowdworker',
                        'constraints': [models.UniqueConstraint(fields=('platform', 'worker_id'), name='one_account_per_platform_worker')],
                    },
                ),
        ]),
        migrations.RunPython(content_types_to("crowd", "annotation"), content_types_to("annotation", "crowd")),
    ]
