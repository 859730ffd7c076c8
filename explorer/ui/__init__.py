"""Widgets, item models, plots and dialogs. No algorithm code lives here."""
