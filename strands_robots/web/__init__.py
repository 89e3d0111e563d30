"""The local label server: the review, segment and report pages.

Needs the ``web`` extra (starlette, uvicorn, jinja2, matplotlib). Entry points:
:func:`strands_robots.web.app.create_app` and :func:`strands_robots.web.server.serve` /
:class:`~strands_robots.web.server.BackgroundServer`; ``strands-labels review ROOT`` and
``strands-labels segments page ROOT`` on the command line. Security rules are in
:mod:`.security`; ``docs/review.md`` describes the page.
"""
