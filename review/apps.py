"""review reacts to the rooms whose work it reviews through their signals, connected here, so that none
of them imports review: benchmarks' imported texts and release cards, annotation's submitted texts and
crowd answers (annotation/signals.py). The arrow goes one way: review may call annotation's services,
annotation knows nothing of review."""

from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from annotation.signals import crowd_answered, texts_submitted
        from benchmarks.importers import texts_imported
        from benchmarks.releases.geometry import derived_answers_asked
        from benchmarks.releases.life import release_card_extras

        from .after_state import derived_answers_by_item
        from .consensus import crowd_answer_arrived, release_agreement
        from .dedup import texts_arrived

        # imported and submitted texts are embedded for near-duplicate search as they arrive
        for texts_written, source in ((texts_imported, "imported"), (texts_submitted, "submitted")):
            texts_written.connect(lambda sender, change_ids, item_ids, **kwargs: texts_arrived(change_ids, item_ids),
                                  weak=False, dispatch_uid=f"review-embed-{source}-texts")
        # an answer-only campaign's answer counts in the item's consensus
        crowd_answered.connect(lambda sender, item_id, **kwargs: crowd_answer_arrived(item_id),
                               weak=False, dispatch_uid="review-consensus-on-crowd-answer")
        # the dataset card's Krippendorff's alpha
        release_card_extras.connect(lambda sender, release, items, **kwargs: release_agreement(items),
                                    weak=False, dispatch_uid="review-release-card-agreement")
        # a release's `change_geometry`: the answers each change's geometry derives (review/after_state.py)
        derived_answers_asked.connect(lambda sender, change_ids, **kwargs: derived_answers_by_item(change_ids),
                                      weak=False, dispatch_uid="review-release-derived-answers")
