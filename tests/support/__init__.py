"""What tests share and is no test: fakes of outside services (the model API, S3), scripted
model answers, worker processes and settings for end-to-end runs, and ``wait_for`` (with its
own tests)."""
