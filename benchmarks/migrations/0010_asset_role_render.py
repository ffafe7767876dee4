# Rendered camera views are scene assets (benchmarks/material/renders.py).

from django.db import migrations, models

ROLES = [('point_cloud', 'Point cloud (source)'), ('viewer_points', 'Point cloud (viewer binary)'), ('topview_plain', 'Top-view map (plain)'), ('topview_semantic', 'Top-view map (semantic)'), ('image', 'Image'), ('image_flipped', 'Image (mirrored twin, FlipEval)'), ('thumbnail', 'Thumbnail'), ('video', 'Video'), ('video_poster', 'Video poster frame'), ('scene_meta', 'Scene metadata (JSON: object states, operation log)'), ('render', 'Rendered camera view (meta: set, index, pose, intrinsics)'), ('export', 'Export file')]


class Migration(migrations.Migration):

    dependencies = [
        ('benchmarks', '0009_idempotent_request_to_core'),
    ]

    operations = [
        migrations.AlterField(
            model_name='asset',
            name='role',
            field=models.CharField(choices=ROLES, help_text='What the file is for.', max_length=30),
        ),
        migrations.AlterField(
            model_name='upload',
            name='role',
            field=models.CharField(choices=ROLES, max_length=30),
        ),
    ]
