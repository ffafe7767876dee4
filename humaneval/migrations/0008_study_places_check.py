# A study links its latest check of places against Prolific, a core.Job (humaneval/services/prolific_places.py).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('core', '0006_job_cancelled'),
        ('humaneval', '0007_study_invitation'),
    ]

    operations = [
        migrations.AddField(
            model_name='study',
            name='places_check',
            field=models.ForeignKey(blank=True, help_text='The latest check of its places against Prolific, as its job.', null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='core.job'),
        ),
    ]
