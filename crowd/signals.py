from django.dispatch import Signal

# A platform says a participant gave their work back (returned, timed out, rejected): kwargs
# `platform`, `worker_id` and `scope` (models.scope_key: the campaign or study the submission entered;
# None when nobody knows, then every stage frees what the worker holds). Sent inside the webhook's
# transaction; stages free what they hold in that scope.
participant_left = Signal()

# A worker id's holder was taken over by the participant's own link (crowd.services.take_over): kwargs
# `user_id` (the holder's account, detached from the id), `worker_id` and `reason`. Sent inside the
# entry's transaction; stages end and flag what the account holds, so it counts nowhere.
entry_taken_over = Signal()
