"""Dialogs of the explorer window (training)."""
