"""Draw the report's figures (not run by Assay: this skill is guideline only)."""

print("figures")
