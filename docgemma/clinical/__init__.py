"""Shared clinical vocabulary (the ground floor): drug names and entity extraction, allergy classes, dose
parsing, the patient reference. Used by the record, the tools and the agent alike; imports nothing above it."""
