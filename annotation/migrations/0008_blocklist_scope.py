"""The blocklist names its scope by a key ("campaign:<id>", empty for everywhere) instead of a
foreign key to a campaign, so it can move to the crowd app and serve studies too."""

from django.db import migrations, models


def scope_from_campaign(apps, schema_editor):
    BlockedWorker = apps.get_model("annotation", "BlockedWorker")
    kept = set()
    for block in BlockedWorker.objects.order_by("id"):
        block.scope = f"campaign:{block.campaign_id}" if block.campaign_id else ""
        key = (block.platform, block.worker_id, block.scope)
        if key in kept:  # two blocks everywhere (NULL campaigns were never unique): one says it
            block.delete()
            continue
        kept.add(key)
        block.save(update_fields=["scope"])


def campaign_from_scope(apps, schema_editor):
    BlockedWorker = apps.get_model("annotation", "BlockedWorker")
    for block in BlockedWorker.objects.exclude(scope=""):
        block.campaign_id = int(block.scope.removeprefix("campaign:"))
        block.save(update_fields=["campaign"])


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0007_crowd_session_binding'),
    ]

    operations = [
        migrations.AddField(
            model_name='blockedworker',
            name='scope',
            field=models.CharField(blank=True, default='', help_text='Empty: blocked everywhere. Else where: "campaign:<id>" or "study:<id>".', max_length=100),
        ),
        migrations.RunPython(scope_from_campaign, campaign_from_scope),
        migrations.RemoveConstraint(
            model_name='blockedworker',
            name='block_once_per_campaign',
        ),
        migrations.RemoveField(
            model_name='blockedworker',
            name='campaign',
        ),
        migrations.AddConstraint(
            model_name='blockedworker',
            constraint=models.UniqueConstraint(fields=('platform', 'worker_id', 'scope'), name='block_once_per_scope'),
        ),
    ]
