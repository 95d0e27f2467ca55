"""MediaPipe Face Mesh topology: which of its 468 points are which, shared by the mesh landmarker
(swap.face_landmarks.face_mesh) and the classical swapper's dense warp."""

from __future__ import annotations

import numpy as np

# The 468 -> 68 correspondence in wide use (iBUG 300-W order: jaw 0-16, brows 17-26, nose 27-35,
# eyes 36-47, outer lips 48-59, inner lips 60-67), e.g. in the MediaPipe-to-dlib ports of
# face-alignment tools. Mesh indices are the subject's right side first, as dlib's are.
MESH_TO_68 = np.array(
    [
        # jaw line, from the subject's right ear to the left ear through the chin (152)
        127, 234, 93, 132, 58, 136, 150, 176, 152, 400, 379, 365, 288, 361, 323, 454, 356,
        70, 63, 105, 66, 107,  # right brow, outer to inner
        336, 296, 334, 293, 300,  # left brow, inner to outer
        168, 197, 5, 4,  # nose bridge down to the tip
        75, 97, 2, 326, 305,  # nostrils and columella
        33, 160, 158, 133, 153, 144,  # right eye: outer corner, upper lid, inner corner, lower lid
        362, 385, 387, 263, 373, 380,  # left eye: inner corner, upper lid, outer corner, lower lid
        61, 39, 37, 0, 267, 269, 291, 405, 314, 17, 84, 181,  # outer lip, from the right corner
        78, 82, 13, 312, 308, 317, 14, 87,  # inner lip, from the right corner
    ],
    np.int64,
)  # fmt: skip


# Face Mesh regions (MediaPipe's face_mesh_connections): the lips' outer and inner contours, each
# eye's lid margin (16 points), and the face oval (36 points, the silhouette).
MESH_LIPS = np.array(
    [61, 146, 91, 181, 84, 17, 314, 405, 321, 375, 291, 185, 40, 39, 37, 0, 267, 269, 270, 409,
     78, 95, 88, 178, 87, 14, 317, 402, 318, 324, 308, 191, 80, 81, 82, 13, 312, 311, 310, 415],
    np.int64,
)  # fmt: skip
# The inner lip line between the corners (78, 308): each upper lip point above the lower lip's at
# the same index.
MESH_UPPER_INNER_LIP = np.array([191, 80, 81, 82, 13, 312, 311, 310, 415], np.int64)
MESH_LOWER_INNER_LIP = np.array([95, 88, 178, 87, 14, 317, 402, 318, 324], np.int64)
MESH_RIGHT_EYE = np.array(
    [33, 7, 163, 144, 145, 153, 154, 155, 133, 246, 161, 160, 159, 158, 157, 173], np.int64
)
MESH_LEFT_EYE = np.array(
    [263, 249, 390, 373, 374, 380, 381, 382, 362, 466, 388, 387, 386, 385, 384, 398], np.int64
)
# Each brow's outline: its upper edge from the outer end in (the 68 points' brow), then its lower
# edge back out (MediaPipe's FACEMESH_RIGHT_EYEBROW / FACEMESH_LEFT_EYEBROW).
MESH_RIGHT_BROW = np.array([70, 63, 105, 66, 107, 55, 65, 52, 53, 46], np.int64)
MESH_LEFT_BROW = np.array([300, 293, 334, 296, 336, 285, 295, 282, 283, 276], np.int64)
MESH_FACE_OVAL = np.array(
    [10, 338, 297, 332, 284, 251, 389, 356, 454, 323, 361, 288, 397, 365, 379, 378, 400, 377,
     152, 148, 176, 149, 150, 136, 172, 58, 132, 93, 234, 127, 162, 21, 54, 103, 67, 109],
    np.int64,
)  # fmt: skip
