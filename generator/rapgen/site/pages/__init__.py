"""One builder per site page: score outputs + archive descriptions -> the records in
:mod:`rapgen.site.cells`. No builder computes a score or applies a scoring rule."""
