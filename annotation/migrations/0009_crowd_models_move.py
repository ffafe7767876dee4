"""CrowdWorker, BlockedWorker and WebhookEvent now live in the crowd app (crowd 0001 takes them over
with their tables): annotation forgets them, state only."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0008_blocklist_scope"),
        ("crowd", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.DeleteModel(name="BlockedWorker"),
            migrations.DeleteModel(name="WebhookEvent"),
            migrations.DeleteModel(name="CrowdWorker"),
        ]),
    ]
