# World frames move through StatusTransitions (a reviewer's verdict, the frames it supersedes): their
# status changes are recorded in core's status history like every other stateful row's.

from django.db import migrations

from core.history import TrackStatusHistory


class Migration(migrations.Migration):

    dependencies = [
        ('benchmarks', '0024_help_texts_without_issue_numbers'),
        ('core', '0003_status_history'),
    ]

    operations = [
        TrackStatusHistory('worldframe'),
    ]
