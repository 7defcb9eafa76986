"""Environment families of gymforge; each subpackage is one family."""
