"""Cloud-neutral Kubernetes plumbing: kubeconfigs, providers, the cluster handle add-ons build on."""
