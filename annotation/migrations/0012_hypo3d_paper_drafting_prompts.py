"""The Hypo3D paper's drafting templates (its Figs. 7-9) as the default DraftingPrompt rows."""

from django.db import migrations


def add_paper_prompts(apps, schema_editor):
    from annotation.drafting import DEFAULT_PROMPTS, paper_prompt

    DraftingPrompt = apps.get_model("annotation", "DraftingPrompt")
    for name, path, target, change_type, question_type, count in DEFAULT_PROMPTS:
        DraftingPrompt.objects.get_or_create(name=name, defaults={
            "target": target, "change_type": change_type, "question_type": question_type,
            "text": paper_prompt(path), "count": count})


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0011_status_history"),
    ]

    operations = [migrations.RunPython(add_paper_prompts, migrations.RunPython.noop)]
