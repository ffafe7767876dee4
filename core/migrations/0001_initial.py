# IdempotentRequest moved here from benchmarks: the table stays (benchmarks_idempotentrequest),
# only Django's record of which app owns it changes.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('benchmarks', '0008_scene_meta'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='IdempotentRequest',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('key', models.CharField(help_text="The client's Idempotency-Key header.", max_length=255)),
                        ('path', models.CharField(help_text='The endpoint the key was used on.', max_length=300)),
                        ('fingerprint', models.CharField(help_text='SHA-256 of the method, path and body.', max_length=64)),
                        ('status', models.PositiveSmallIntegerField(help_text="The answer's status code.", null=True)),
                        ('body', models.TextField(blank=True, help_text="The answer's body (JSON).")),
                        ('created_at', models.DateTimeField(auto_now_add=True, db_index=True)),
                        ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'benchmarks_idempotentrequest',
                        'constraints': [models.UniqueConstraint(fields=('user', 'key', 'path'), name='idempotency_key_once_per_user_path')],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
