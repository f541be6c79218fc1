"""Analysis over mined records: prose for the cards, written from the facts."""
