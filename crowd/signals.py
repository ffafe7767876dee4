from django.dispatch import Signal

# A platform says a participant gave their work back (returned, timed out, rejected): kwargs
# `platform` and `worker_id`. Sent inside the webhook's transaction; stages free what they hold.
participant_left = Signal()
