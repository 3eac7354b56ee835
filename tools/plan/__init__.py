"""Offline plan (DESIGN.md §3): evaluate the real program under the Pulumi SDK's mocks."""
