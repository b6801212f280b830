"""The review page (Flask): a blind, side-by-side comparison of two policies' minutes on one
validation meeting, with the transcript excerpt and the human reference; better / worse / tie
and an optional comment. Plain HTML forms: no JavaScript, nothing fetched from elsewhere (the
stylesheet is served by the app; a Content-Security-Policy forbids everything else).

Submissions carry a **pair token**: the pair (meeting, left and right policy) and a one-time
nonce, signed with a secret that lives only in the server's memory (itsdangerous). The server
takes the pair from the token, never from the form, so a submission cannot name other
policies; an altered, foreign or expired token is refused; a token already used is refused by
the ratings file's UNIQUE nonce (a replay, a double click, a second tab). Every refusal is a
page that says what happened and links to the next pair.

Without an access token (the default on the loopback) the server answers only requests addressed
to it: the Host header must name a loopback address, ``localhost`` or the address it is bound to.
A page elsewhere whose own name is made to resolve to 127.0.0.1 (DNS rebinding) sends its own
name and is refused, so it can neither read a transcript nor rate.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import random
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flask import Flask, g, redirect, render_template, request, url_for
from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer

from evotrainer.errors import EvoTrainerError
from evotrainer.policy.repetition import degeneracy
from evotrainer.review.agreement import agreement
from evotrainer.review.bradley_terry import policy_scores
from evotrainer.review.human_model import fit_human_model
from evotrainer.review.pairs import ReviewSource
from evotrainer.run.ratings import Rating, RatingStore, ReplayedRating

PAIR_MAX_AGE_S = 12 * 3600
MAX_COMMENT = 2000
MAX_REVIEWER = 80
CHOICES = {"A": "left", "B": "right", "tie": "tie"}
COOKIE = "evotrainer_review"
CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)


class Refused(Exception):
    def __init__(self, status: int, title: str, message: str) -> None:
        super().__init__(message)
        self.status, self.title, self.message = status, title, message


def host_name(header: str) -> str:
    """The host of a Host header, without port, brackets or a final dot, lower-cased."""
    name = header.strip().lower()
    if name.startswith("["):
        name = name[1:].partition("]")[0]
    elif name.count(":") == 1:
        name = name.partition(":")[0]
    return name.rstrip(".")


def _ip(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


def addressed_here(header: str, bound: str) -> bool:
    """Whether a Host header names this server: a loopback address, ``localhost``, the address
    it is bound to, or, bound to every interface, any IP address (a rebinding attack needs a
    name of its own; an address cannot be made to point elsewhere)."""
    name, bound = host_name(header), host_name(bound)
    ip, bound_ip = _ip(name), _ip(bound)
    if name in ("localhost", bound) or (ip is not None and ip.is_loopback):
        return True
    return ip is not None and bound_ip is not None and bound_ip.is_unspecified


@dataclass(frozen=True)
class Review:
    """What the app's handlers share: the run's pairs and ratings, the pair draws, the pair
    token signer, and the access rules (the access token, else the bound address)."""

    source: ReviewSource
    store: RatingStore
    pick: random.Random
    signer: URLSafeTimedSerializer
    access_token: str | None
    host: str
    max_age_s: int


def create_app(
    run_dir: Path,
    access_token: str | None = None,
    rng: random.Random | None = None,
    max_age_s: int = PAIR_MAX_AGE_S,
    host: str = "127.0.0.1",
) -> Flask:
    """The review app for one run directory. ``access_token``: required on every request
    (``?token=`` once, then a cookie); ``rng``: the pair draws (tests pass a seeded one);
    ``host``: the address the server is bound to (without a token, requests must name it, or a
    loopback name, in their Host header)."""
    source = ReviewSource(Path(run_dir))
    review = Review(
        source=source,
        store=RatingStore(source.path),
        pick=rng or random.SystemRandom(),
        signer=URLSafeTimedSerializer(secrets.token_bytes(32), salt="evotrainer-review-pair"),
        access_token=access_token,
        host=host,
        max_age_s=max_age_s,
    )
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = 64 * 1024
    app.before_request(lambda: _check_access(review))
    app.after_request(lambda resp: _headers(review, resp))
    _register_errors(app)
    app.add_url_rule("/", "review", lambda: _review_page(review), methods=["GET"])
    app.add_url_rule("/rate", "rate", lambda: _rate(review), methods=["POST"])
    app.add_url_rule("/scores", "scores", lambda: _scores(review), methods=["GET"])
    app.add_url_rule(
        "/health", "health", lambda: {"ratings": review.store.count()}, methods=["GET"]
    )
    return app


# -- access and headers ---------------------------------------------------------------------------


def _check_access(review: Review) -> Any:
    """Before every request: the access token (a query parameter, then a cookie), else the
    Host check; a refusal page, or None to go on."""
    access_token = review.access_token
    if access_token is None:
        return _check_host(review.host)
    given = request.args.get("token") or request.cookies.get(COOKIE) or ""
    if not hmac.compare_digest(given.encode(), access_token.encode()):
        return _refusal(
            Refused(
                403,
                "Access token needed",
                "This review server was started with an access token: open the address it "
                "printed (ending in ?token=...).",
            )
        )
    g.set_token_cookie = request.args.get("token") is not None
    return None


def _check_host(host: str) -> Any:
    given = request.headers.get("Host", "")
    if addressed_here(given, host):
        return None
    return _refusal(
        Refused(
            403,
            "Unknown host",
            f"The request was not addressed to this review server (Host: "
            f"{host_name(given)[:100]!r}; it answers to localhost, the loopback addresses "
            f"and {host!r}), so nothing is shown: a page on another site may be trying to "
            "reach it. Open the address the server printed.",
        )
    )


def _headers(review: Review, resp: Any) -> Any:
    resp.headers["Content-Security-Policy"] = CSP
    resp.headers["X-Content-Type-Options"] = "nosniff"
    resp.headers["Referrer-Policy"] = "no-referrer"
    resp.headers["Cache-Control"] = "no-store"
    if review.access_token is not None and g.get("set_token_cookie"):
        resp.set_cookie(COOKIE, review.access_token, httponly=True, samesite="Strict")
    return resp


def _register_errors(app: Flask) -> None:
    """Every error is a page that says what happened."""

    @app.errorhandler(Refused)
    def _refused(exc: Refused) -> Any:
        return _refusal(exc)

    @app.errorhandler(EvoTrainerError)
    def _unreadable(exc: EvoTrainerError) -> Any:  # e.g. a damaged ratings file
        return _refusal(Refused(503, "Cannot read the run's files", str(exc)))

    @app.errorhandler(413)
    def _too_large(_exc: Any) -> Any:
        return _refusal(Refused(413, "Submission too large", "The form was larger than 64 KB."))

    @app.errorhandler(405)
    def _method(_exc: Any) -> Any:
        return _refusal(
            Refused(405, "Not allowed", "Ratings are sent with the form's buttons (POST /rate).")
        )


def _refusal(exc: Refused) -> Any:
    return (
        render_template("message.html", title=exc.title, message=exc.message, error=True),
        exc.status,
    )


# -- the pages ------------------------------------------------------------------------------------


def _review_page(review: Review) -> Any:
    """GET /: the next pair, with a signed pair token for the form."""
    source = review.source
    ratings = review.store.all()  # a damaged ratings file: the EvoTrainerError page
    try:
        pair = source.next_pair(ratings, review.pick)
    except EvoTrainerError as exc:
        return _refusal(Refused(503, "Nothing to review yet", str(exc)))
    saved = request.args.get("saved", type=int)
    if pair is None:
        return render_template(
            "message.html",
            title="Nothing to review",
            message="This run has no two policies with different minutes on a selection "
            "meeting yet. Reload when the run has validated more policies.",
            ratings=len(ratings),
        )
    issued = time.time()
    token = review.signer.dumps(
        {
            "n": secrets.token_urlsafe(16),
            "m": pair.meeting_id,
            "l": pair.left,
            "r": pair.right,
            "t": issued,
        }
    )
    left = source.minutes(pair.left, pair.meeting_id)
    right = source.minutes(pair.right, pair.meeting_id)
    return render_template(
        "review.html",
        run=source.path.name,
        meeting=pair.meeting_id,
        transcript=source.transcript(pair.meeting_id),
        reference=source.reference(pair.meeting_id),
        left=left,
        right=right,
        left_stats=_repetition(left),
        right_stats=_repetition(right),
        token=token,
        ratings=len(ratings),
        saved=saved,
        max_comment=MAX_COMMENT,
    )


def _repetition(text: str) -> str:
    """A line under a pair's minutes: how much they repeat themselves (policy/repetition.py)."""
    d = degeneracy([text])
    return (
        f"{d.words:.0f} words · {d.distinct4:.0%} distinct 4-grams · "
        f"{d.repeated_units:.0%} repeated sentences"
        + (" · a repetition loop" if d.loop_share else "")
    )


def _rate(review: Review) -> Any:
    """POST /rate: store one rating of the pair the token names; every bad submission is
    refused and nothing is stored."""
    form = request.form
    payload = _pair_payload(review, form.get("pair", ""))
    choice = form.get("choice", "")
    if choice not in CHOICES:
        raise Refused(
            400,
            "Malformed submission",
            "The choice must be A, B or tie (one of the three buttons); nothing was stored.",
        )
    comment, reviewer = form.get("comment", ""), form.get("reviewer", "")
    if len(comment) > MAX_COMMENT or len(reviewer) > MAX_REVIEWER:
        raise Refused(
            400,
            "Malformed submission",
            f"The comment may have at most {MAX_COMMENT} characters and the name "
            f"{MAX_REVIEWER}; nothing was stored.",
        )
    rating = Rating(
        meeting_id=str(payload["m"]),
        left=str(payload["l"]),
        right=str(payload["r"]),
        outcome=CHOICES[choice],
        comment=comment.strip(),
        reviewer=reviewer.strip(),
        nonce=str(payload["n"]),
        issued_at=float(payload["t"]),
        created_at=time.time(),
    )
    try:
        rid = review.store.add(rating)
    except ReplayedRating:
        raise Refused(
            409,
            "Already rated",
            "This pair was rated before (the form was sent twice, or replayed). The first "
            "rating is kept; nothing was stored twice.",
        ) from None
    return redirect(url_for("review", saved=rid), code=303)


def _pair_payload(review: Review, raw: str) -> dict[str, Any]:
    """The pair a submission's token names, checked: signed by this server, not expired,
    complete."""
    max_age_s = review.max_age_s
    if not raw:
        raise Refused(400, "Malformed submission", "The form has no pair token.")
    try:
        payload = review.signer.loads(raw, max_age=max_age_s)
    except SignatureExpired:
        raise Refused(
            400,
            "Pair expired",
            f"This pair was shown more than {max_age_s // 3600 or max_age_s} "
            f"{'hours' if max_age_s >= 3600 else 'seconds'} ago; nothing was stored. "
            "Rate the next pair instead.",
        ) from None
    except BadSignature:
        raise Refused(
            400,
            "Malformed submission",
            "The pair token was altered or was not issued by this review server (it may "
            "have been restarted since the page was shown); nothing was stored.",
        ) from None
    if not isinstance(payload, dict) or not {"n", "m", "l", "r", "t"} <= set(payload):
        raise Refused(400, "Malformed submission", "The pair token is incomplete.")
    return payload


def _scores(review: Review) -> Any:
    """GET /scores: the policies' scores from the ratings, and the ratings' agreement with the
    automatic measures."""
    source = review.source
    ratings = review.store.all()
    with contextlib.suppress(EvoTrainerError):  # no checkpoint yet: scores without rows
        source.refresh()
    rows_of = source.rows.get
    weights = source.cfg.outer.s_val_weights
    concise = [source.cfg.meta.concise_component] if source.cfg.meta.concise_component else []
    model = fit_human_model(ratings, rows_of, source.cfg.meta.human_prior, concise)
    return render_template(
        "scores.html",
        run=source.path.name,
        ratings=len(ratings),
        scores=policy_scores(ratings, source.cfg.meta.human_prior),
        agreement=agreement(ratings, rows_of, weights, concise),
        features=model.feature_weights() if model else {},
    )
