"""The human baseline's verbs, by what they hold: `design` (a study's design and who may take it),
`sessions` (a participant's timed session from start to finish), `stimuli` (what an item's page
shows), `results` (the human row, graded by the same scorer as the models, and its exports)."""
