"""The site's pages, one module each; webapp/site/urls.py maps them. Views are thin: they call the
same services and selectors as the API."""
