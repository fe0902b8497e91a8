"""Episode scores, the moving window and the solve rule."""

import numpy as np

from polyak.scores import ScoreBoard


def test_per_env_episodes_and_window():
    board = ScoreBoard(num_envs=2, window=3, mean_over_envs=False)
    assert board.add(np.array([1.0, 2.0]), np.array([False, False])) == []
    assert board.add(np.array([1.0, 2.0]), np.array([True, False])) == [2.0]
    assert board.add(np.array([5.0, 5.0]), np.array([True, True])) == [5.0, 9.0]
    assert board.episodes == 3 and board.window_mean == 16 / 3 and board.best_score == 9.0
    assert board.best_window_mean == 16 / 3


def test_mean_over_envs_records_one_score_per_round():
    board = ScoreBoard(num_envs=3, window=2, mean_over_envs=True)
    assert board.add(np.array([1.0, 2.0, 6.0]), np.array([True, True, True])) == [3.0]
    assert board.episodes == 1


def test_solve_needs_a_full_window():
    board = ScoreBoard(num_envs=1, window=3, mean_over_envs=False)
    for _ in range(2):
        board.add(np.array([50.0]), np.array([True]))
    assert not board.solved(30.0)
    board.add(np.array([50.0]), np.array([True]))
    assert board.solved(30.0) and not board.solved(None) and not board.solved(60.0)
