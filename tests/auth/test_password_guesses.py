"""Password guesses on the web: per client and address, a ceiling per client, one count for every
form that checks a password (sign-in, the account page, erasing one's own account)."""

from portal.auth import guesses
from tests.conftest import PASSWORD, AuthActions
from tests.pages import csrf_from

OFFICE = "198.51.100.7"  # one address on the network for a whole office


def _person_at(app, network_address):
    person = app.test_client()
    person.environ_base["REMOTE_ADDR"] = network_address
    return person


def _erase_own_account(person, password):
    token = csrf_from(person.get("/account/erase").get_data(as_text=True))
    return person.post("/account/erase", data={"current_password": password, "understood": "y", "csrf_token": token})


def test_five_typos_in_an_office_do_not_lock_out_a_colleague(app, make_user):
    typist, colleague = make_user("manager"), make_user("manager")
    at_the_office = AuthActions(_person_at(app, OFFICE))
    assert [at_the_office.login(typist, password=f"typo-{n}").status_code for n in range(5)] == [401] * 5
    assert AuthActions(_person_at(app, OFFICE)).login(colleague).status_code == 302


def test_an_office_of_typists_stays_under_the_ceiling(app, make_user):
    colleagues = [make_user("manager") for _ in range(12)]
    at_the_office = AuthActions(_person_at(app, OFFICE))
    for colleague in colleagues:  # twelve people each mistype twice in five minutes, then get it right
        assert [at_the_office.login(colleague, password=f"typo-{n}").status_code for n in range(2)] == [401, 401]
        assert at_the_office.login(colleague).status_code == 302
        at_the_office.logout()


def test_one_client_gets_no_more_guesses_at_one_account_than_before(app, make_user):
    account = make_user("manager")
    guesser = AuthActions(_person_at(app, "203.0.113.5"))
    statuses = [guesser.login(account, password=f"guess-{n}").status_code for n in range(6)]
    assert statuses == [401] * 5 + [429], "five, as the one per-client limit allowed before"
    assert guesser.login(account).status_code == 429, "the right password too: a refusal must tell nothing"
    assert guesser.login(account.upper()).status_code == 429, "the same account, however it is typed"
    assert AuthActions(_person_at(app, OFFICE)).login(account).status_code == 302, "its owner, elsewhere"


def test_guessing_across_many_accounts_meets_the_ceiling_per_client(app, make_user):
    owner = make_user("manager")
    guesser = AuthActions(_person_at(app, "203.0.113.5"))
    statuses = [
        guesser.login(f"someone{n}@acme.example", password="Summer2026!").status_code
        for n in range(guesses.GUESSES_PER_CLIENT + 1)
    ]
    assert statuses == [401] * guesses.GUESSES_PER_CLIENT + [429]
    assert guesser.login(owner).status_code == 429


def test_guesses_at_erasing_ones_account_count_with_sign_in(app, make_user):
    """A stolen session guesses the password on /account/erase: its guesses and sign-in's at that
    account from that client share one count."""
    employee = make_user("employee")
    person = _person_at(app, "203.0.113.5")
    assert AuthActions(person).login(employee).status_code == 302
    statuses = [_erase_own_account(person, f"guess-{n}").status_code for n in range(3)]
    assert statuses == [400] * 3
    AuthActions(person).logout()
    assert [AuthActions(person).login(employee, password=f"guess-{n}").status_code for n in range(2)] == [401] * 2
    assert AuthActions(person).login(employee).status_code == 429


def test_erasing_ones_account_is_refused_past_the_limit_even_with_the_password(app, make_user, count):
    employee = make_user("employee")
    person = _person_at(app, "203.0.113.5")
    assert AuthActions(person).login(employee).status_code == 302
    statuses = [_erase_own_account(person, f"guess-{n}").status_code for n in range(5)]
    assert statuses == [400] * 5
    assert _erase_own_account(person, PASSWORD).status_code == 429
    assert count("users", "email = :e", e=employee) == 1, "nothing was erased"


def test_a_form_sent_without_a_password_is_no_guess(app, make_user):
    employee = make_user("employee")
    person = _person_at(app, "203.0.113.5")
    assert AuthActions(person).login(employee).status_code == 302
    for _ in range(6):
        assert _erase_own_account(person, "").status_code == 400
    assert _erase_own_account(person, "wrong-password-x").status_code == 400, "still a guess left"
