"""Confounder streams: continual learning on streams whose confounding shifts stage by stage."""
