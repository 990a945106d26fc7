"""The shipped examples' plans and jobs, run directly: each job as a subprocess, checked
against its own acceptance checks and the review panel."""
