"""What recall packs and when it speaks: the context block within its budget (a long chunk by its lines that
match, when entries share it), the plugin's recall budget, the memory suggestion, and the recall gate fitted
for a model without shipped weights (its probes). Uses ranking, notes, text."""
