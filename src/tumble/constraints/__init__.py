"""Constraint rows: contact rows (with the event method's resting contacts), joint rows with their J̇, islands
and attachments (docs/architecture.md)."""
