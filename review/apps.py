from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from benchmarks.importers import texts_imported

        from .dedup import texts_arrived

        # imported texts are embedded for near-duplicate search as they arrive (benchmarks does not import review)
        texts_imported.connect(lambda sender, change_ids, item_ids, **kwargs: texts_arrived(change_ids, item_ids),
                               weak=False, dispatch_uid="review-embed-imported-texts")
