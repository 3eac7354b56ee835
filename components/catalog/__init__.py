"""Facts, not resources: pinned, sourced data the components and the config validation share."""
