"""`make bench`: how fast the offline plan and the policy run, and how they grow (see __main__)."""
