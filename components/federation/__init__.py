"""Karmada federation: one control plane for models across clusters, regions and clouds.

Karmada is the engine; this package configures it: the control plane on the host cluster
(control_plane, certificates), the members (member), what the Karmada API must know to hold
InferenceServices (serving_api, interpreter), and per federated model its template, propagation and
override policies (model, manifests, placement), all created through the Karmada API by karmada_objects.
render.py is the InferenceService renderer seam.
"""
