"""Page views, one module per stage; each is thin and calls that stage's services."""
