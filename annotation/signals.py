"""What annotation announces to the rooms that react to its work, so that it imports none of them
(review connects its receivers in review/apps.py). Both are sent by submit_assignment inside its
transaction: Django's signals call their receivers at once, so what a receiver writes commits or rolls
back with the submission."""

from django.dispatch import Signal

# A submission wrote new texts: change_ids, item_ids (raw context changes, crowd-written items).
texts_submitted = Signal()
# An answer-only assignment was submitted: item_id, the item answered.
crowd_answered = Signal()
