# A job's last change or progress report, so the sweep can tell a job whose worker died (core/jobs.py).

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('core', '0003_status_history'),
    ]

    operations = [
        migrations.AddField(
            model_name='job',
            name='updated_at',
            field=models.DateTimeField(auto_now=True, help_text='Its last change or progress report.'),
        ),
    ]
