"""Reusable Pulumi components of the inference platform, by layer (see DESIGN.md §1)."""
