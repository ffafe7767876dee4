# Every status change of this app's stateful models is recorded in core's status history
# (core/history.py: database triggers, so bulk updates and hand-written SQL are recorded too).

from django.db import migrations

from core.history import TrackStatusHistory


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0010_drafting_prompt'),
        ('core', '0003_status_history'),
    ]

    operations = [
        TrackStatusHistory('assignment'),
    ]
