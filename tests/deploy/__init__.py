"""The deployment files (compose, Kubernetes, Prometheus, Grafana) agree with the code."""
