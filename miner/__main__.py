from miner.cli import run

run()
