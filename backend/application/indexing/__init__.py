"""Writing the index: the passes over the vault (keyword, then dense), one note into a generation, jobs and
their progress, when the index is opened, written and healed (the supervisor), the recall gate's upkeep after
a job, the model chosen, migration to another store and the check against the vault. Uses search (to warm it
and fit its gate), serving and the domain."""
