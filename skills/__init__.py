"""The skill library: pattern models, extraction, retrieval, maintenance, application and sharing.

Reserved for the skill library; it holds no code yet, and the ``assay-skills`` pool starts no
worker until it does.
"""
