from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from annotation.services import crowd_answered
        from benchmarks.importers import texts_imported
        from benchmarks.services import release_card_extras

        from .consensus import crowd_answer_arrived, release_agreement
        from .dedup import texts_arrived

        # imported texts are embedded for near-duplicate search as they arrive (benchmarks does not import review)
        texts_imported.connect(lambda sender, change_ids, item_ids, **kwargs: texts_arrived(change_ids, item_ids),
                               weak=False, dispatch_uid="review-embed-imported-texts")
        # an answer-only campaign's answer counts in the item's consensus (annotation does not import it)
        crowd_answered.connect(lambda sender, item_id, **kwargs: crowd_answer_arrived(item_id),
                               weak=False, dispatch_uid="review-consensus-on-crowd-answer")
        # the dataset card's Krippendorff's alpha (benchmarks does not import review)
        release_card_extras.connect(lambda sender, release, items, **kwargs: release_agreement(items),
                                    weak=False, dispatch_uid="review-release-card-agreement")
