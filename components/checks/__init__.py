"""Checks across the typed specs: each yields an Issue (key path, message with the fix) for a mistake the
schema alone cannot see. Above the specs and the domain maths (they run the same sizing the workloads do), below
the components; components/checks/loader.py runs them after building the EnvironmentSpec.
"""
