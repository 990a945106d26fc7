"""End-to-end tests: a real Temporal dev server, PostgreSQL and worker pools (in process or
as ``assay`` processes) run whole plans, goals and studies as a user would."""
